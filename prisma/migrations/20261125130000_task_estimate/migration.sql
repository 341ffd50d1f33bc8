-- AlterTable
ALTER TABLE "tasks" ADD COLUMN     "estimate" DECIMAL(5,1);


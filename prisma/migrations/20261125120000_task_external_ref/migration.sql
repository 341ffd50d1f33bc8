-- AlterTable
ALTER TABLE "tasks" ADD COLUMN     "external_ref" VARCHAR(100);


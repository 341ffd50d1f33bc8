-- AlterTable
ALTER TABLE "webhook_deliveries" ADD COLUMN     "final_attempt" BOOLEAN NOT NULL DEFAULT false;


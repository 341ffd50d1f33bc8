-- AlterTable
ALTER TABLE "webhooks" ADD COLUMN     "deleted_at" TIMESTAMPTZ(3);

-- AlterTable
ALTER TABLE "webhook_deliveries" ADD COLUMN     "final_attempt" BOOLEAN NOT NULL DEFAULT false;


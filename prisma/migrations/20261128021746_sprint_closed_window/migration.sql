-- AlterTable
ALTER TABLE "sprints" ADD COLUMN     "closed_end_date" DATE,
ADD COLUMN     "closed_start_date" DATE;


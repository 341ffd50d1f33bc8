import { attachmentRules } from './support/attachment-rules';

// decisions.md section 24: attachments, each rule a test, through HTTP, on the directory store.
describe('attachments (decisions.md section 24), directory store', () => {
  // Four apps (the limits, the race, a restart): each start takes seconds, more on a busy machine.
  jest.setTimeout(5 * 60_000);
  attachmentRules();
});

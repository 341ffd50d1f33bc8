// npm run client:generate: writes clients/typescript/schema.d.ts from the served document
// (the npm script builds dist/ first). Deterministic: the same document gives the same bytes.
const { writeFileSync } = require('node:fs');
const path = require('node:path');
const { CLIENT_TYPES_FILE, generateClientTypes } = require('./client-types');
const { servedOpenApiDocument } = require('./openapi-document');

async function main() {
  const types = await generateClientTypes(await servedOpenApiDocument());
  writeFileSync(CLIENT_TYPES_FILE, types);
  console.log(`Wrote ${path.relative(process.cwd(), CLIENT_TYPES_FILE)}`);
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});

// Before any test: the tests that run the service as a separate process (shutdown under load,
// database outage, the README's snippets) start the built server, dist/main.js, as `npm start`
// does. Built as `npm start` builds it: when it is missing (a fresh clone) or older than a source file.
const { buildIfStale } = require('../../scripts/build-if-stale');

module.exports = async function buildGlobalSetup() {
  buildIfStale();
};

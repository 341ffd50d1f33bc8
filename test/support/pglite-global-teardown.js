// After the PGlite run: removes the blank data directory pglite-global-setup.js wrote.
module.exports = require('./pglite-global-setup').teardown;

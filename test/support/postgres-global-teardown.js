// After the PostgreSQL run: drops the template database postgres-global-setup.js made.
module.exports = require('./postgres-global-setup').teardown;

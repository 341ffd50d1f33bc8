'use strict';
// The floor of bench/attachments.js: the least a Node process does to take a file and give it
// back over HTTP. POST /upload pipes the request body to a new file; GET /file pipes one file to
// the response. No parsing, no hashing, no database: what is left is the bytes' own path.
// node bench/attachments-floor.js <directory> <download file>; PORT from the environment.

const fs = require('node:fs');
const http = require('node:http');
const path = require('node:path');
const { pipeline } = require('node:stream');

const [directory, downloadFile] = process.argv.slice(2);
let uploads = 0;

http
  .createServer((req, res) => {
    if (req.method === 'GET' && req.url === '/ready') return res.end('ok');
    if (req.method === 'POST' && req.url === '/upload') {
      const file = path.join(directory, `upload-${uploads++}`);
      return pipeline(req, fs.createWriteStream(file), (error) => {
        res.statusCode = error ? 500 : 201;
        res.end();
        fs.rm(file, { force: true }, () => undefined);
      });
    }
    if (req.method === 'GET' && req.url === '/file') {
      res.setHeader('Content-Length', fs.statSync(downloadFile).size);
      return pipeline(fs.createReadStream(downloadFile), res, () => undefined);
    }
    res.statusCode = 404;
    res.end();
  })
  .listen(Number(process.env.PORT), '127.0.0.1');

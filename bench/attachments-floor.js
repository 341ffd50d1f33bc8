'use strict';
// The floor of bench/attachments.js: the least a Node process does to take a file and give it
// back over HTTP. POST /upload pipes the request body to a new file; GET /file pipes one file to
// the response. No parsing, no hashing, no database: what is left is the bytes' own path.
// node bench/attachments-floor.js <directory> <download file> [<S3 bucket URL>]; PORT from the environment.
// With a bucket URL (s3rver's, unsigned), POST /upload-s3 pipes the request body into one PUT of
// that length to the bucket: the least an S3 back end does (bench/attachments-s3.js's S3 floor).

const fs = require('node:fs');
const http = require('node:http');
const path = require('node:path');
const { pipeline } = require('node:stream');

const [directory, downloadFile, bucketUrl] = process.argv.slice(2);
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
    if (req.method === 'POST' && req.url === '/upload-s3' && bucketUrl) {
      const put = http.request(`${bucketUrl}/floor-${uploads++}`, {
        method: 'PUT',
        headers: { 'Content-Length': req.headers['content-length'] },
      });
      put.on('response', (answer) => {
        answer.resume();
        res.statusCode = answer.statusCode === 200 ? 201 : 500;
        res.end();
      });
      return pipeline(req, put, (error) => error && ((res.statusCode = 500), res.end()));
    }
    if (req.method === 'GET' && req.url === '/file') {
      res.setHeader('Content-Length', fs.statSync(downloadFile).size);
      return pipeline(fs.createReadStream(downloadFile), res, () => undefined);
    }
    res.statusCode = 404;
    res.end();
  })
  .listen(Number(process.env.PORT), '127.0.0.1');

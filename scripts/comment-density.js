// `node scripts/comment-density.js [folder...]`: the share of src/'s non-blank lines that hold
// only a comment, per folder and in all (docs/layout.md records it). TypeScript's own parser finds
// the comments, so `//` in a string or a template (a URL, SQL) is not counted; src/generated is left out.
const fs = require('node:fs');
const path = require('node:path');
const ts = require('typescript');

const SRC = path.resolve(__dirname, '..', 'src');

function sourceFiles(dir) {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const file = path.join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'generated' ? [] : sourceFiles(file);
    return entry.name.endsWith('.ts') ? [file] : [];
  });
}

function countLines(file) {
  const text = fs.readFileSync(file, 'utf8');
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const inComment = new Uint8Array(text.length);
  const mark = (ranges) => {
    for (const range of ranges ?? []) inComment.fill(1, range.pos, range.end);
  };
  const visit = (node) => {
    mark(ts.getLeadingCommentRanges(text, node.pos));
    mark(ts.getTrailingCommentRanges(text, node.end));
    for (const child of node.getChildren(source)) visit(child);
  };
  visit(source);
  let [lines, commentLines, start] = [0, 0, 0];
  for (const line of text.split('\n')) {
    if (line.trim() !== '') {
      lines++;
      const code = [...line].some((char, index) => char.trim() !== '' && inComment[start + index] === 0);
      if (!code) commentLines++;
    }
    start += line.length + 1;
  }
  return { lines, commentLines };
}

const folders = new Map();
const total = { lines: 0, commentLines: 0 };
for (const file of sourceFiles(SRC)) {
  const relative = path.relative(SRC, file).split(path.sep);
  const folder = relative.length === 1 ? '(src)' : relative.slice(0, relative[0] === 'common' && relative.length > 2 ? 2 : 1).join('/');
  const counted = countLines(file);
  const sum = folders.get(folder) ?? { lines: 0, commentLines: 0 };
  for (const into of [sum, total]) {
    into.lines += counted.lines;
    into.commentLines += counted.commentLines;
  }
  folders.set(folder, sum);
}
const chosen = process.argv.slice(2);
const share = ({ lines, commentLines }) => `${((100 * commentLines) / lines).toFixed(1)} %`.padStart(7);
for (const [folder, sum] of [...folders].sort(([a], [b]) => a.localeCompare(b))) {
  if (chosen.length === 0 || chosen.includes(folder)) console.log(`${folder.padEnd(24)}${share(sum)}  (${sum.commentLines} of ${sum.lines} lines)`);
}
console.log(`${'src/'.padEnd(24)}${share(total)}  (${total.commentLines} of ${total.lines} lines)`);

// Builds the package: TypeScript types for the proto messages (proto-loader-gen-types,
// shipped with @grpc/proto-loader: no protoc) into src/gen/, then `tsc` into dist/ (or
// into the directory given as the first argument, which the tests use to compare a fresh
// build with the committed dist/).
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const out = path.resolve(process.argv[2] ?? path.join(root, 'dist'));
const gen = path.join(root, 'src', 'gen');
const bin = (name) => path.join(root, 'node_modules', '.bin', name);

fs.rmSync(gen, { recursive: true, force: true });
execFileSync(
  bin('proto-loader-gen-types'),
  [
    '--longs=Number',
    '--enums=String',
    '--defaults',
    '--oneofs',
    '--includeComments',
    '--grpcLib=@grpc/grpc-js',
    '-I',
    'proto',
    '-O',
    'src/gen',
    'ctxd/v1/ctxd.proto',
  ],
  { cwd: root, stdio: 'inherit' },
);
// ESM resolution needs the extension on relative imports; the generator leaves it off.
for (const file of walk(gen)) {
  const text = fs.readFileSync(file, 'utf8');
  const fixed = text
    .replace(/(from '\.{1,2}\/[^']*?)(?<!\.js)';/g, "$1.js';")
    .replace(/^\/\/ Original file: .*\n/m, '');
  fs.writeFileSync(file, fixed);
}
fs.rmSync(out, { recursive: true, force: true });
execFileSync(bin('tsc'), ['-p', 'tsconfig.json', '--outDir', out], { cwd: root, stdio: 'inherit' });

function* walk(dir) {
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) yield* walk(full);
    else if (entry.name.endsWith('.ts')) yield full;
  }
}

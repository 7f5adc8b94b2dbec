// The SDK's modules import one another without a cycle: every `import … from './x.js'`
// (type-only imports included) of src/*.ts is an edge, and the graph has no loop.
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';

const SRC = new URL('../src/', import.meta.url).pathname;

/** Each module's local imports (generated code aside): name → names. */
function graph() {
  const edges = new Map();
  for (const file of readdirSync(SRC).filter((name) => name.endsWith('.ts'))) {
    const text = readFileSync(join(SRC, file), 'utf8');
    const imports = [...text.matchAll(/from '\.\/([a-z0-9_-]+)\.js'/gi)].map((match) => match[1]);
    edges.set(file.replace(/\.ts$/, ''), imports);
  }
  return edges;
}

/** The first cycle found, as a path of module names, or null. */
function cycle(edges) {
  const state = new Map();
  const path = [];
  const visit = (node) => {
    state.set(node, 'open');
    path.push(node);
    for (const next of edges.get(node) ?? []) {
      if (state.get(next) === 'open') return [...path.slice(path.indexOf(next)), next];
      if (!state.has(next)) {
        const found = visit(next);
        if (found) return found;
      }
    }
    path.pop();
    state.set(node, 'done');
    return null;
  };
  for (const node of edges.keys()) {
    if (!state.has(node)) {
      const found = visit(node);
      if (found) return found;
    }
  }
  return null;
}

test('the SDK modules import one another without a cycle', () => {
  const edges = graph();
  assert.ok(edges.get('client')?.includes('session'), 'the graph is read');
  assert.equal(cycle(edges)?.join(' → ') ?? null, null);
});

test('a cycle is found', () => {
  const edges = new Map([
    ['a', ['b']],
    ['b', ['c']],
    ['c', ['a']],
  ]);
  assert.deepEqual(cycle(edges), ['a', 'b', 'c', 'a']);
});

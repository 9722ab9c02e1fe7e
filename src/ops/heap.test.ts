import assert from 'node:assert/strict';
import { test } from 'node:test';
import { boundHeapGrowth } from './heap.js';

test("the heap's growing factor is bounded unless the operator set one", () => {
  assert.equal(boundHeapGrowth(['--heap-growing-percent=80']), false);
  assert.equal(boundHeapGrowth(['--heap_growing_percent=80']), false);
  assert.equal(boundHeapGrowth(['--max-old-space-size=512']), true);
});

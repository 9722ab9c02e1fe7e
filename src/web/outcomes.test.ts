import assert from 'node:assert/strict';
import { test } from 'node:test';
import { OUTCOMES, type Outcome, refuse } from '../core/outcomes.js';
import { RESULT_CODES } from './errors.js';
import { ACQUIRING_CODE, acquiringMessage } from './outcomes.js';

test('every outcome maps to a result code whose text is the outcome’s own words', () => {
  for (const o of Object.keys(OUTCOMES) as Outcome[]) {
    const code = ACQUIRING_CODE[o];
    assert.ok(code, `${o} has a result code`);
    assert.equal(RESULT_CODES[code].text, OUTCOMES[o].text, `${o} → ${code}`);
  }
  assert.equal(new Set(Object.values(ACQUIRING_CODE)).size, Object.keys(OUTCOMES).length, 'no two outcomes share a code');
});

test('the acquiring message is the code, its text and the detail', () => {
  assert.equal(
    acquiringMessage(refuse('amount_exceeds', 'amount 5.00 is more than the authorised 4.00')),
    '1013:Amount exceeds the available amount: amount 5.00 is more than the authorised 4.00',
  );
  assert.equal(acquiringMessage(refuse('not_found')), '0404:Record not found');
});

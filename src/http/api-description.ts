// The OpenAPI document's own description (`info.description`, also the top of /docs): what
// a merchant needs beyond the operations, self-contained. The result-code catalogue, the
// sandbox card table and the signing example are generated from the code that decides
// them (RESULT_CODES, the sandbox's card table, the signer), so they cannot drift.
import { canonicalString, sign } from '../crypto/signature.js';
import { publishedTestCards, TEST_CARDS } from '../processors/sandbox/cards.js';
import { TEST_PAYOUT_ACCOUNTS } from '../processors/sandbox/payouts.js';
import { RESULT_CODES, type ResultCode } from '../web/errors.js';
import { markdownText } from './markdown.js';

/** The worked example: a test vector of the signature rules (capture of two orders). */
export const SIGNING_EXAMPLE = {
  secret: '0123456789abcdef0123456789abcdef',
  body: {
    merchant_id: '10001',
    account_id: '20001',
    capture_orders: [
      { transaction_id: 'T1', order_no: 'A', currency: 'USD', amount: '10.00' },
      { transaction_id: 'T2', order_no: 'B', currency: 'JPY', amount: '1200' },
    ],
  },
};

export interface GuideLink {
  title: string;
  href: string;
}

/** The sandbox test cards, consecutive cards with the same outcome on one row. */
export function testCardRows(): Array<{ cards: string[]; outcome: string }> {
  const rows: Array<{ cards: string[]; outcome: string }> = [];
  for (const { card, outcome } of publishedTestCards()) {
    const last = rows.at(-1);
    if (last && last.outcome === outcome) last.cards.push(card);
    else rows.push({ cards: [card], outcome });
  }
  return rows;
}

function testCardSection(): string {
  const shared = Object.entries(TEST_CARDS)
    .filter(([, c]) => c.shared_success)
    .map(([card]) => card);
  const table = testCardRows()
    .map((r) => `| ${r.cards.map((c) => (/^\d+$/.test(c) ? `\`${c}\`` : markdownText(c))).join(', ')} | ${markdownText(r.outcome)} |`)
    .join('\n');
  return `## Sandbox test cards

Test accounts are served by the built-in sandbox. Any future expiry date; any 3-digit security code (4 for American Express).

| card number | outcome |
|---|---|
${table}

On a test account the success cards ${shared.map((c) => `\`${c}\``).join(', ')} never trip the velocity, history or new-card rules, however often one shopper pays with them, so an integration suite can pay them without limit. Blocklists, thresholds and the REJECT and REVIEW cards still apply, and every rule applies in full to every other card.

### Sandbox payouts

\`LOCAL\` payouts complete at once, \`SWIFT\` ones after \`TOLLGATE_SANDBOX_SWIFT_DELAY_MS\` (5 s). These beneficiary account numbers (or IBANs ending in them) fail:

| account number | outcome |
|---|---|
${TEST_PAYOUT_ACCOUNTS.map((a) => `| \`${a.account_number}\` | \`${a.outcome}\`: ${markdownText(a.description)} |`).join('\n')}

Fund a test account with \`npx tollgate balance top-up --account ID --currency USD --amount 1000.00\`.`;
}

function resultCodeSection(): string {
  const rows = (Object.keys(RESULT_CODES) as ResultCode[]).map((code) => {
    const { text, http } = RESULT_CODES[code];
    return `| \`${code}\` | ${markdownText(text)} | ${http === 200 ? '' : http} |`;
  });
  return `## Result codes

\`<code>:<text>\` in \`result_info\`, \`error_message\`, \`refund_message\` and \`return_message\`. Payment and item outcomes answer HTTP 200; a code with an HTTP status refuses the whole request with it.

| code | text | HTTP when the whole request is refused |
|---|---|---|
${rows.join('\n')}`;
}

function signingSection(): string {
  const { secret, body } = SIGNING_EXAMPLE;
  return `## Signing: \`encryption_data\`

Every request carries its signature in the body field \`encryption_data\`: the lowercase hex HMAC-SHA256 of the body's canonical string, keyed with the account's secret key as UTF-8 text.

1. Flatten the body, without its top-level \`encryption_data\`, into (path, value) pairs: an object member's path is \`parent.key\` (\`key\` at the top), an array element's is \`parent[i]\` (counted from 0).
2. Leave out nulls and empty strings (so \`{}\` and \`[]\` give no pair). Strings are taken as they are, numbers in their shortest round-trip decimal form (\`10.5\`, \`1763596800\`), booleans as \`true\` or \`false\`.
3. In every path and value, \`%\` becomes \`%25\`, \`&\` becomes \`%26\` and \`=\` becomes \`%3D\`; nothing else is encoded, so no value can pose as another field.
4. Sort the pairs by (escaped) path in UTF-8 byte order and join them as \`path=value\` with \`&\`.

An empty string, \`null\`, \`{}\` and \`[]\` count as absent for every purpose (validation, behaviour, storage, echo): what is left out of the signature is never acted on.

A form or XML body is signed as it is read: form values are strings; in XML an element that occurs once is a member (\`risk_reasons.name\`), several times an array (\`risk_reasons[0].name\`).

Worked example, secret \`${secret}\`, body:

\`\`\`json
${JSON.stringify(body)}
\`\`\`

canonical string:

\`\`\`text
${canonicalString(body)}
\`\`\`

\`encryption_data\`: \`${sign(body, secret)}\`

Answers that carry \`encryption_data\` are signed the same way with the account's current key; verify them before you trust them. An XML answer is signed as you read it back: an element with children is an object, an element that occurs once is a member and several times an array, and an empty element is an empty string (so it is left out). A missing or wrong signature gets HTTP 401 \`0401:Invalid signature\`; on a test account the answer says what differs.`;
}

/** A byte count as merchants read it: `1 MiB`, `512 KiB`, or bytes. */
function size(bytes: number): string {
  if (bytes % (1024 * 1024) === 0) return `${bytes / (1024 * 1024)} MiB`;
  return bytes % 1024 === 0 ? `${bytes / 1024} KiB` : `${bytes} bytes`;
}

/** The whole description, in CommonMark with tables. */
export function apiDescription(guides: readonly GuideLink[], body_limit_bytes = 1024 * 1024): string {
  const links = guides.map((g) => `[${markdownText(g.title)}](${g.href})`).join(' · ');
  return `The merchant-facing acquiring interface of Tollgate, a payment acquiring gateway. ${links ? `Guides: ${links}.` : ''}

## Requests

- Every operation is a \`POST\` to a path under \`/v1\` of the server below.
- The body may be JSON, \`application/x-www-form-urlencoded\` with bracket notation for nested fields (\`capture_orders[0][amount]=10.00\`), or XML (any root element; child elements are fields; repeated sibling elements form an array). The body's own shape decides, not the \`Content-Type\` header. XML with a DTD or entity declarations is refused.
- Unknown fields are refused with HTTP 400 naming the field. Bodies over ${size(body_limit_bytes)} get HTTP 413.
- Amounts are decimal strings with exactly the currency's minor digits (\`10.00\` USD, \`1200\` JPY, \`1.500\` KWD). Times are UTC.
- Optional headers: \`Idempotency-Key\` (the same key with the same body within 24 hours gets the stored answer, marked \`Idempotent-Replayed: true\`; with another body, HTTP 409) and \`X-Request-Id\` (echoed in the answer, generated when absent).

## Answers

- \`/v1/authorise\` answers XML with the root element \`respon\`; every other operation answers JSON.
- A payment's outcome, and each batch item's, is answered with HTTP 200: look at \`result_info\`, or at each item's status and \`error_message\`. A request refused as a whole answers 4xx or 5xx with \`return_status\` \`0\`, \`return_message\`, \`error_message\` and \`error_field\` naming the problem, and \`request_id\` (in XML \`respon\` on \`/v1/authorise\`); it is not signed, and nothing was stored.

## Generic interface

\`/v1/payments\`, \`/v1/refunds\`, \`/v1/accounts\`, \`/v1/transfers\` and \`/v1/balance\` (tags *generic: …*) are a second interface in the card-platform shape: \`Authorization: Bearer sk_test_…\` (keys from \`npx tollgate apikey create --account ID\`), form or JSON bodies, amounts as integers in minor units, lowercase currencies, Unix-second times, lists with \`limit\` / \`starting_after\` / \`ending_before\`, and errors as \`{"error": {"type", "code", "message", "param"}}\` (HTTP 400, 401, 402 card declined, 403, 404, 409, 429 with \`Retry-After\`). They are not signed with \`encryption_data\`. See the interface guide for the details.

${signingSection()}

${resultCodeSection()}

${testCardSection()}
`;
}

#!/usr/bin/env node
// Writes the trimmed copies of Adyen's published API documents that the contract tests read
// (checkout-v71.json, webhooks-v1.json): only the operations and webhooks the connector
// uses, with every component they reference, so a fresh clone tests without ../shared.
//   node src/processors/adyen/vendor/trim.mjs [folder of the full documents]
// Default folder: ../shared/vendor/adyen beside the repository: Adyen/adyen-openapi at commit
// aa014f0cbdb5, MIT (LICENSE here). Then `npx biome check --write src/processors/adyen/vendor`
// formats the copies as committed.
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

const here = import.meta.dirname;
const from = process.argv[2] ?? path.resolve(here, '../../../../../shared/vendor/adyen');

const CHECKOUT_PATHS = [
  '/payments',
  '/payments/details',
  '/payments/{paymentPspReference}/captures',
  '/payments/{paymentPspReference}/cancels',
  '/payments/{paymentPspReference}/refunds',
  '/cancels',
];
const WEBHOOKS = ['/AUTHORISATION', '/CAPTURE', '/CAPTURE_FAILED', '/CANCELLATION', '/REFUND', '/REFUND_FAILED', '/CANCEL_OR_REFUND', '/CHARGEBACK'];

/** The document with only `keep` (paths or webhooks, POST only) and the components they reach. */
function trim(doc, section, keep) {
  const out = { openapi: doc.openapi, info: { title: doc.info.title, version: doc.info.version, license: doc.info.license }, [section]: {}, components: {} };
  const seen = new Set();
  const visit = (node) => {
    if (Array.isArray(node)) return node.forEach(visit);
    if (!node || typeof node !== 'object') return;
    for (const [k, v] of Object.entries(node)) {
      if (k === '$ref' && typeof v === 'string' && v.startsWith('#/components/') && !seen.has(v)) {
        seen.add(v);
        const [, , kind, name] = v.split('/');
        out.components[kind] ??= {};
        out.components[kind][name] = doc.components[kind][name];
        visit(doc.components[kind][name]);
      } else visit(v);
    }
  };
  for (const p of keep) {
    out[section][p] = { post: doc[section][p].post };
    visit(out[section][p]);
  }
  for (const kind of Object.keys(out.components))
    out.components[kind] = Object.fromEntries(Object.entries(out.components[kind]).sort(([a], [b]) => a.localeCompare(b)));
  return out;
}

const checkout = JSON.parse(readFileSync(path.join(from, 'CheckoutService-v71.json'), 'utf8'));
// The connector sends card details only: of the payment method's alternatives (over a
// hundred, most of the document's size) the trimmed copy keeps CardDetails.
const method = checkout.components.schemas.PaymentRequest.properties.paymentMethod;
method.oneOf = method.oneOf.filter((m) => m.$ref === '#/components/schemas/CardDetails');
method['x-trimmed'] = 'only CardDetails is kept of the published alternatives (src/processors/adyen/vendor/trim.mjs)';
const webhooks = JSON.parse(readFileSync(path.join(from, 'Webhooks-v1.json'), 'utf8'));
writeFileSync(path.join(here, 'checkout-v71.json'), `${JSON.stringify(trim(checkout, 'paths', CHECKOUT_PATHS), null, 2)}\n`);
writeFileSync(path.join(here, 'webhooks-v1.json'), `${JSON.stringify(trim(webhooks, 'webhooks', WEBHOOKS), null, 2)}\n`);

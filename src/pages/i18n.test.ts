// One catalogue, five languages (docs/contract.md §14): every key in every language with the same
// placeholders, and the page language chosen as a table of cases says.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { CATALOGUE, formatMoney, LANGS, type Lang, type MessageKey, negotiateLang, supportedLang, t } from './i18n.js';

const placeholders = (text: string) => [...text.matchAll(/\{([a-z_]+)\}/g)].map((m) => m[1]).sort();

describe('catalogue', () => {
  test('English, Spanish, Portuguese, French and German', () => {
    assert.deepEqual([...LANGS].sort(), ['de', 'en', 'es', 'fr', 'pt']);
  });

  test('every key exists in every language, is not empty, and keeps the English placeholders', () => {
    const keys = Object.keys(CATALOGUE.en) as MessageKey[];
    assert.ok(keys.length >= 30);
    for (const lang of LANGS) {
      assert.deepEqual(Object.keys(CATALOGUE[lang]).sort(), [...keys].sort(), `${lang} has exactly the English keys`);
      for (const key of keys) {
        const text = CATALOGUE[lang][key];
        assert.ok(text.trim().length > 0, `${lang} ${key} is empty`);
        assert.deepEqual(placeholders(text), placeholders(CATALOGUE.en[key]), `${lang} ${key} placeholders`);
      }
    }
  });

  test('a page string is translated, not copied from English (beyond shared words)', () => {
    const keys = Object.keys(CATALOGUE.en) as MessageKey[];
    for (const lang of LANGS.filter((l) => l !== 'en')) {
      const same = keys.filter((k) => CATALOGUE[lang][k] === CATALOGUE.en[k]);
      assert.deepEqual(same, [], `${lang} copies English for ${same.join(', ')}`);
    }
  });

  test('t fills placeholders and leaves unknown ones visible', () => {
    assert.equal(t('de', 'threeds.done.text', { order_no: 'A-1' }), 'Bestellung A-1: Sie können zum Händler zurückkehren.');
    assert.equal(t('en', 'threeds.done.text'), 'Order {order_no}: you may return to the merchant.');
  });
});

describe('negotiation', () => {
  const cases: Array<[string, ReadonlyArray<string | undefined>, string | undefined, Lang]> = [
    ['nothing at all', [], undefined, 'en'],
    ['explicit pt-BR', ['pt-BR'], undefined, 'pt'],
    ['explicit es_ES (underscore)', ['es_ES'], undefined, 'es'],
    ['explicit upper case', ['FR'], undefined, 'fr'],
    ['explicit beats Accept-Language', ['de'], 'fr,en;q=0.5', 'de'],
    ['first explicit wins (default_lang before browser_lang)', ['es', 'de'], undefined, 'es'],
    ['unsupported explicit falls to the next', ['ja-JP', 'pt'], undefined, 'pt'],
    ['unsupported explicit falls to Accept-Language', ['ja'], 'de-DE,de;q=0.9', 'de'],
    ['malformed explicit is ignored', ['<script>', 'en-'], 'es', 'es'],
    ['empty explicit is ignored', ['', undefined], 'fr', 'fr'],
    ['Accept-Language first choice', [], 'fr-CH, fr;q=0.9, en;q=0.8, de;q=0.7, *;q=0.5', 'fr'],
    ['Accept-Language by q, not by order', [], 'en;q=0.3, pt-PT;q=0.9, es;q=0.5', 'pt'],
    ['Accept-Language equal q keeps header order', [], 'de;q=0.8, es;q=0.8', 'de'],
    ['Accept-Language skips unsupported', [], 'ja, zh-CN;q=0.9, es;q=0.1', 'es'],
    ['Accept-Language q=0 excludes', [], 'fr;q=0, fr-FR', 'en'],
    ['Accept-Language * is English', [], '*', 'en'],
    ['Accept-Language * skips excluded', [], 'en;q=0, *', 'es'],
    ['Accept-Language malformed q skips the entry', [], 'de;q=2, es;q=abc, pt;q=0.5', 'pt'],
    ['Accept-Language none supported', [], 'ja, ko', 'en'],
    ['Accept-Language garbage', [], ';;,,=q,<b>', 'en'],
    ['Accept-Language with spaces and case', [], '  DE-at ; Q=0.9 ', 'de'],
  ];
  for (const [name, explicit, header, want] of cases) {
    test(name, () => {
      assert.equal(negotiateLang(explicit, header), want);
    });
  }

  test('a repeated header is read as one list', () => {
    assert.equal(negotiateLang([], ['ja', 'de;q=0.5']), 'de');
  });

  test('a header of thousands of entries is read only in part', () => {
    const long = `${Array.from({ length: 5000 }, () => 'xx').join(',')},de`;
    assert.equal(negotiateLang([], long), 'en', 'entries past the bound are not read');
  });

  test('supportedLang reads the primary subtag only', () => {
    assert.deepEqual(['pt-BR', 'pt_br', 'es-419', 'de-CH-1901', 'fr', 'ptx', 'p', 'zh-Hant', ' de '].map(supportedLang), [
      'pt',
      'pt',
      'es',
      'de',
      'fr',
      null,
      null,
      null,
      'de',
    ]);
  });
});

test('amounts are written as the page language writes them, exactly, with the currency exponent (issue 36 item 10)', () => {
  const nb = '\u00a0';
  const cases: Array<[Lang, number, string, string]> = [
    ['de', 5990, 'EUR', `59,90${nb}€`], // the German page said 59.90 EUR
    ['en', 4200, 'USD', '$42.00'],
    ['fr', 123456789, 'EUR', `1\u202f234\u202f567,89${nb}€`],
    ['pt', 12050, 'BRL', `R$${nb}120,50`],
    ['es', 100, 'EUR', `1,00${nb}€`],
    ['en', 1502, 'JPY', '¥1,502'], // no minor unit
    ['en', 1234, 'KWD', 'KWD\u00a01.234'], // three decimals
    ['en', 999_999_999_999_999, 'USD', '$9,999,999,999,999.99'], // past 2^53 / 100 as a float, exact as text
  ];
  for (const [lang, minor, currency, text] of cases) assert.equal(formatMoney(lang, minor, currency), text, `${lang} ${minor} ${currency}`);
});

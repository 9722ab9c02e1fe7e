// Brazilian document and address checks for Pix and Boleto (docs/contract.md §15). Pure functions.
// CPF and CNPJ check digits come from `cpf-cnpj-validator` (MIT, no dependencies), which
// also knows the alphanumeric CNPJ that Receita Federal issues from July 2026 (Nota
// Técnica 49/2024). It is used in strict mode: only the official mask or the bare
// characters are accepted, never stray letters or spaces silently stripped.
import { cnpj, cpf } from 'cpf-cnpj-validator';

export type BrazilianDocument = { kind: 'CPF' | 'CNPJ'; value: string };

/**
 * A CPF (`529.982.247-25` or 11 digits) or a CNPJ (`11.222.333/0001-81`, 14 characters,
 * the first 12 possibly letters), with valid check digits and not one repeated digit.
 * Returns the bare characters, or null.
 */
export function brazilianDocument(text: string): BrazilianDocument | null {
  if (cpf.isValid(text, true)) return { kind: 'CPF', value: cpf.strip(text, true) };
  if (cnpj.isValid(text, true)) return { kind: 'CNPJ', value: cnpj.strip(text, true) };
  return null;
}

/** CEP: eight digits, with or without the hyphen (`01310-100`). */
export function isBrazilianPostalCode(text: string): boolean {
  return /^\d{5}-?\d{3}$/.test(text) && !/^0{5}-?0{3}$/.test(text);
}

/** The 26 states and the Federal District (IBGE abbreviations). */
export const BRAZILIAN_STATES: readonly string[] = [
  'AC',
  'AL',
  'AM',
  'AP',
  'BA',
  'CE',
  'DF',
  'ES',
  'GO',
  'MA',
  'MG',
  'MS',
  'MT',
  'PA',
  'PB',
  'PE',
  'PI',
  'PR',
  'RJ',
  'RN',
  'RO',
  'RR',
  'RS',
  'SC',
  'SE',
  'SP',
  'TO',
];

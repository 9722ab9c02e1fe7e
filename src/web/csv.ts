// CSV cells a spreadsheet cannot run (OWASP "CSV injection"): every CSV the gateway writes (the
// portal's exports, settlement reports) passes its text cells through here.

/** A cell starting with = + - @ (or a tab or CR) reads as a formula: such a text cell gets a leading apostrophe. */
export function spreadsheetSafe(cell: string): string {
  return /^[=+\-@\t\r]/.test(cell) ? `'${cell}` : cell;
}

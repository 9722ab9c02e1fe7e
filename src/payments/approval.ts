// Where an approved payment goes (docs/contract.md §6, §7, §10): held for review when the risk
// engine says REVIEW, otherwise captured or left authorised by the capture mode.
import type { PaymentStatus } from './states.js';

/** Undecided review holds expire after 7 days and their funds are released. */
export const REVIEW_WINDOW_MS = 7 * 24 * 3600 * 1000;

export function statusAfterApproval(
  risk_action: string,
  capture_method: 'automatic' | 'manual',
): { status: Extract<PaymentStatus, 'review' | 'captured' | 'authorised'>; result: '0000' | '0004' } {
  // REJECT after the processor approved cannot happen from the score alone (it only
  // falls after authentication); should thresholds change meanwhile, a person decides.
  if (risk_action === 'REVIEW' || risk_action === 'REJECT') return { status: 'review', result: '0004' };
  return { status: capture_method === 'automatic' ? 'captured' : 'authorised', result: '0000' };
}

/**
 * The capture method the processor is told: a payment to be held for review is only
 * authorised there (manual), whatever its own mode, since the review captures it (ACCEPT
 * under automatic capture) or cancels it (REJECT, expiry) at the processor.
 */
export function processorCaptureMethod(risk_action: string, capture_method: 'automatic' | 'manual'): 'automatic' | 'manual' {
  return statusAfterApproval(risk_action, capture_method).status === 'review' ? 'manual' : capture_method;
}

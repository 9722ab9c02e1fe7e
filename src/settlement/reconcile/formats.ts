// The report formats by connector: what `--connector` names (issue 35 item 3).
import { adyenFormat } from './adyen.js';
import type { Connector, ReportFormat } from './format.js';
import { stripeFormat } from './stripe.js';

export const FORMATS: Readonly<Record<Connector, ReportFormat>> = { adyen: adyenFormat, stripe: stripeFormat };

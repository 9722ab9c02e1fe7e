// Each capability's CLI commands and background tasks are imported here so they register
// (in this order in the help).
import '../merchants/cli.js';
import './sign.js';
import '../ledger/cli.js';
import '../risk/cli.js';
import '../notifications/cli.js';
import '../pages/cli.js';
import '../methods/cli.js';
import '../threeds/tasks.js';
import '../review/tasks.js';
import '../payments/tasks.js';
import '../subscriptions/tasks.js';
import '../subscriptions/cli.js';
import '../scheduler/clock-cli.js';
import '../fx/cli.js';
import '../payouts/tasks.js';
import '../payouts/cli.js';
import '../apikeys/cli.js';
import '../portal/cli.js';
import '../portal/tasks.js';

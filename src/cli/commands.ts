// Each capability's CLI commands and background tasks are imported here so they register.
import '../notifications/cli.js';
import '../risk/cli.js';
import '../threeds/tasks.js';
import '../review/tasks.js';
import '../ledger/cli.js';
import '../payments/tasks.js';

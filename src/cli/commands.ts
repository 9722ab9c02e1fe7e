// Each capability's CLI commands and background tasks are imported here so they register.
import '../ledger/cli.js';
import '../payments/tasks.js';

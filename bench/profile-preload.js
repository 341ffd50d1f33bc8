'use strict';
// Loaded into the service with `node -r` when the harness profiles it (--profile).
// The service re-raises SIGTERM after its graceful shutdown, and a process killed by a
// signal never writes its --cpu-prof file: SIGUSR2 makes it exit normally instead.
process.on('SIGUSR2', () => process.exit(0));

import { Global, Module } from '@nestjs/common';
import { DrainState } from './drain-state';
import { HttpDrain } from './http-drain';

/** The shutdown state every module can read or wait on (DrainState), and the HTTP side of draining. */
@Global()
@Module({ providers: [DrainState, HttpDrain], exports: [DrainState, HttpDrain] })
export class LifecycleModule {}

import { Global, Module } from '@nestjs/common';
import { RouteTable } from './http/routes';
import { CursorCodec } from './pagination/cursor';

/** Pieces every feature module uses: the list cursor codec, the router's routes. */
@Global()
@Module({ providers: [CursorCodec, RouteTable], exports: [CursorCodec, RouteTable] })
export class CommonModule {}

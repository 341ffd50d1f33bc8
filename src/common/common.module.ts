import { Global, Module } from '@nestjs/common';
import { CursorCodec } from './pagination/cursor';

/** Pieces every feature module uses: the list cursor codec. */
@Global()
@Module({ providers: [CursorCodec], exports: [CursorCodec] })
export class CommonModule {}

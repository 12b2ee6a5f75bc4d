// PGlite's file system for the embedded engine, with each file's mode kept to its owner
// (docs/decisions.md, the embedded database). Shared by the engine and its bootstrap thread.
import { NodeFS } from '@electric-sql/pglite/nodefs'

/**
 * The process's umask (077, set by openEmbedded) covers what Node creates; PGlite's engine then
 * sets each new file's mode itself (0666, by a chmod no umask limits), so its chmod is masked too.
 */
export class OwnerOnlyFS extends NodeFS {
  override async init(...args: Parameters<NodeFS['init']>) {
    const { emscriptenOpts } = await super.init(...args)
    const maskChmod = (mod: { FS: unknown }) => {
      const fs = mod.FS as { doChmod: (stream: unknown, node: unknown, mode: number, dontFollow: boolean) => void }
      const doChmod = fs.doChmod
      fs.doChmod = (stream, node, mode, dontFollow) => doChmod.call(fs, stream, node, mode & ~0o077, dontFollow)
    }
    return { emscriptenOpts: { ...emscriptenOpts, preRun: [...(emscriptenOpts.preRun ?? []), maskChmod] } }
  }
}

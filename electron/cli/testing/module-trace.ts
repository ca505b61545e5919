// Loaded with `node --import` into a spawned `gpushare`: appends every module of the compiled tree that
// the command loads to $GPUSHARE_MODULE_TRACE, one path (relative to the tree) a line.
import { register } from 'node:module';

const hooks = `
import { appendFileSync } from 'node:fs';
export async function resolve(specifier, context, next) {
  const resolved = await next(specifier, context);
  const at = resolved.url.indexOf(process.env.GPUSHARE_MODULE_TREE);
  if (at >= 0) appendFileSync(process.env.GPUSHARE_MODULE_TRACE, resolved.url.slice(at + process.env.GPUSHARE_MODULE_TREE.length) + '\\n');
  return resolved;
}`;
register(`data:text/javascript,${encodeURIComponent(hooks)}`);

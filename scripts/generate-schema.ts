/**
 * Writes `schema.json` and the reference section of `docs/config.md` from the
 * zod config schema (`npm run schema`). Tests fail when either is stale.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { renderJsonSchema, updateConfigDocs } from '../src/core/config/json-schema.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const schemaFile = `${root}schema.json`;
const docsFile = `${root}docs/config.md`;

await writeFile(schemaFile, renderJsonSchema());
await writeFile(docsFile, updateConfigDocs(await readFile(docsFile, 'utf8')));
console.log('wrote schema.json and docs/config.md');

// Parse Mermaid files with Mermaid's own parser (mermaid 11 under jsdom):
// "ok FILE TYPE" or "bad FILE: error" for each; exits 1 if any is bad.
// Run from a copy inside the directory that holds node_modules (see
// scripts/setup-mermaid); the tests copy it there.
import { JSDOM } from 'jsdom';
import { readFileSync } from 'fs';

const dom = new JSDOM('<!doctype html><html><body></body></html>');
globalThis.window = dom.window;
globalThis.document = dom.window.document;
const { default: mermaid } = await import('mermaid');
mermaid.initialize({ startOnLoad: false });
let bad = 0;
for (const f of process.argv.slice(2)) {
	try {
		const r = await mermaid.parse(readFileSync(f, 'utf8'));
		console.log(`ok ${f} ${r.diagramType}`);
	} catch (e) {
		const m = String((e && e.message) || e).split('\n').slice(0, 4).join(' | ');
		console.log(`bad ${f}: ${m}`);
		bad = 1;
	}
}
process.exit(bad);

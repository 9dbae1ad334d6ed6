// Writes each chart of a fleetsim report as SVG, with Vega's own renderer (no browser, no
// canvas): node render_images.mjs PAGE_DATA.json OUT_DIR vega.min.js vega-lite.min.js ...
// PAGE_DATA is the page's {"datasets": {...}, "charts": [{id, dataset, spec}]}; the
// libraries are the same browser builds the page inlines, loaded as plain scripts, so the
// SVG files and the page draw the charts with the same code. Prints each file written.
import fs from 'node:fs';
import path from 'node:path';
import vm from 'node:vm';

const [dataPath, outDir, ...libraries] = process.argv.slice(2);
for (const library of libraries) {
  // A browser build outside a module defines globalThis.vega, globalThis.vegaLite, ...
  vm.runInThisContext(fs.readFileSync(library, 'utf8'), {filename: library});
}
const page = JSON.parse(fs.readFileSync(dataPath, 'utf8'));
for (const chart of page.charts) {
  const spec = chart.spec;
  spec.datasets = {[chart.dataset]: page.datasets[chart.dataset]};
  const compiled = globalThis.vegaLite.compile(spec).spec;
  const view = new globalThis.vega.View(globalThis.vega.parse(compiled), {renderer: 'none'});
  const svg = await view.toSVG();
  view.finalize();
  const file = path.join(outDir, chart.id + '.svg');
  fs.writeFileSync(file, svg);
  console.log(file);
}

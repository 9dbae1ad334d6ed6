// Opens a fleetsim report page in headless Chromium (Debian's, driven by playwright-core
// from web/node_modules) with the network cut off, as a user opening the file offline
// would, and fails unless: the page loads with no console error and no page error, asks
// for nothing but its own file, draws every chart it lists (window.fleetsimReport) as an
// SVG with marks of non-zero size, and a full-page screenshot is written.
//
//   node tests/report/page_check.cjs REPORT.html SCREENSHOT.png
const path = require('node:path');
const fs = require('node:fs');
const { chromium } = require(path.join(__dirname, '..', '..', 'web', 'node_modules', 'playwright-core'));

async function main() {
  const [page_path, screenshot] = process.argv.slice(2);
  const problems = [];
  const browser = await chromium.launch({
    executablePath: process.env.FLEETSIM_CHROMIUM || '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
           '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  try {
    const context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
    const page = await context.newPage();
    page.on('console', (message) => {
      if (message.type() === 'error' || message.type() === 'warning')
        problems.push(`console ${message.type()}: ${message.text()}`);
    });
    page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
    // Offline: every request but the page itself (and inline data) is refused and reported.
    const url = 'file://' + path.resolve(page_path);
    await page.route('**/*', (route) => {
      const asked = route.request().url();
      if (asked === url || asked.startsWith('data:')) return route.continue();
      problems.push(`the page asked for ${asked}`);
      return route.abort();
    });
    await page.goto(url, { waitUntil: 'load' });
    await page.waitForFunction(() => window.fleetsimReport !== undefined, null, { timeout: 60000 });
    const report = await page.evaluate(() => window.fleetsimReport);
    if (report.charts.length === 0) problems.push('the page lists no charts');
    for (const failed of report.failed) problems.push(`chart failed: ${failed}`);
    const charts = await page.evaluate((ids) => ids.map((id) => {
      const svg = document.querySelector(`#chart-${id} svg`);
      if (!svg) return { id, svg: false, marks: 0 };
      const box = svg.getBoundingClientRect();
      // Vega puts the data's marks (lines, bars, points) in groups of class role-mark;
      // axes, grids, legends and titles are other roles, drawn even without data.
      const marks = [...svg.querySelectorAll('g.role-mark > path, g.role-mark > rect')]
        .filter((m) => { const b = m.getBBox(); return b.width > 0 || b.height > 0; }).length;
      return { id, svg: true, width: box.width, height: box.height, marks };
    }), report.charts);
    for (const chart of charts) {
      if (!chart.svg) problems.push(`chart ${chart.id}: no SVG drawn`);
      else if (chart.width < 100 || chart.height < 100) problems.push(`chart ${chart.id}: ${chart.width}x${chart.height} px`);
      else if (chart.marks === 0) problems.push(`chart ${chart.id}: drawn empty (no marks)`);
    }
    await page.screenshot({ path: screenshot, fullPage: true });
    if (!fs.existsSync(screenshot) || fs.statSync(screenshot).size < 10000)
      problems.push('no screenshot');
    console.log(`${charts.length} charts: ` + charts.map((c) => `${c.id} (${c.marks} marks)`).join(', '));
  } finally {
    await browser.close();
  }
  if (problems.length) {
    for (const problem of problems) console.error('FAIL: ' + problem);
    process.exit(1);
  }
  console.log('page check passed');
}

main().catch((error) => { console.error(error); process.exit(1); });

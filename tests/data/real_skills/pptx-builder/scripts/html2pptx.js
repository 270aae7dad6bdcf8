#!/usr/bin/env node
// Convert HTML slides to a .pptx: Playwright measures each element, pptxgenjs places it.
const { chromium } = require("playwright");
const PptxGenJS = require("pptxgenjs");
const path = require("node:path");

async function main(files, out) {
  const browser = await chromium.launch({
    env: { ...process.env, PLAYWRIGHT_BROWSERS_PATH: "0" },
  });
  const deck = new PptxGenJS();
  deck.layout = "LAYOUT_16x9";
  for (const file of files) {
    const page = await browser.newPage({ viewport: { width: 960, height: 540 } });
    await page.goto("file://" + path.resolve(file));
    const boxes = await page.$$eval("h1, h2, p, li", (nodes) =>
      nodes.map((n) => ({ text: n.innerText, rect: n.getBoundingClientRect().toJSON() })));
    const slide = deck.addSlide();
    for (const box of boxes) {
      slide.addText(box.text, { x: box.rect.x / 96, y: box.rect.y / 96, w: box.rect.width / 96 });
    }
    await page.close();
  }
  await browser.close();
  await deck.writeFile({ fileName: out });
}

const args = process.argv.slice(2);
const outIndex = args.indexOf("--out");
main(args.slice(0, outIndex), args[outIndex + 1]).catch((err) => {
  console.error(err.message);
  process.exit(1);
});

/**
 * A grouped horizontal bar chart as a standalone SVG: one group of bars per
 * category (a class, a kind of query, a tool), one bar per series, each bar
 * labelled with its value. Plain SVG, no script and no external font, so it
 * renders the same on GitHub, in an editor's preview and in a browser.
 */

export interface ChartData {
  title: string;
  /** What the values measure, written under the axis. */
  unit: string;
  /** The axis' end; the largest value when not given. */
  max: number | undefined;
  categories: string[];
  /** A value per category, in the order of `categories`; undefined where the series has none. */
  series: { name: string; values: (number | undefined)[] }[];
}

// Colours that stay apart for the common kinds of colour blindness (Okabe–Ito).
const PALETTE = ["#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00"];
const WIDTH = 760;
const LABEL_WIDTH = 210;
const PLOT_WIDTH = 440;
const BAR = 13;
const GROUP_GAP = 10;
const TOP = 58;

export function escapeXml(text: string): string {
  return text.replace(/[<>&"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/**
 * The axis for values up to `largest`: a step of 1, 2, 2.5 or 5 times a power
 * of ten, the smallest that reaches it in at most six steps, so the grid reads
 * in round numbers and the bars use most of the width.
 */
export function roundAxis(largest: number): { end: number; step: number } {
  const power = 10 ** Math.floor(Math.log10(largest / 6));
  const step = [1, 2, 2.5, 5, 10].map((m) => m * power).find((s) => Math.ceil(largest / s) <= 6) ?? 10 * power;
  return { end: Math.ceil(largest / step) * step, step };
}

/** About how wide `text` is at 12 px in a sans-serif font: wide characters (CJK) about a square, others about 7 px. */
function textWidth(text: string): number {
  let width = 0;
  for (const c of text) width += /[\u2E80-\uFFEF]/u.test(c) ? 12 : 7;
  return width;
}

/** A value as its bar's label: fractions to two decimals, counts as integers. */
function formatValue(value: number, max: number): string {
  return max <= 1 ? value.toFixed(2) : String(Math.round(value));
}

export function barChartSvg(chart: ChartData): string {
  const values = chart.series.flatMap((s) => s.values.filter((v): v is number => v !== undefined));
  const axis = chart.max === undefined ? roundAxis(Math.max(1, ...values)) : { end: chart.max, step: chart.max / 5 };
  const max = axis.end;
  const groupHeight = chart.series.length * BAR + GROUP_GAP;
  const height = TOP + chart.categories.length * groupHeight + 40;
  const x = (v: number) => LABEL_WIDTH + (Math.min(v, max) / max) * PLOT_WIDTH;
  const out: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${height}" viewBox="0 0 ${WIDTH} ${height}" font-family="sans-serif" font-size="12">`,
    `<rect width="${WIDTH}" height="${height}" fill="#ffffff"/>`,
    `<text x="10" y="20" font-size="14" font-weight="bold">${escapeXml(chart.title)}</text>`,
  ];
  // The legend in one row, each entry as wide as its name (no font metrics in SVG: estimated).
  let lx = LABEL_WIDTH;
  chart.series.forEach((s, i) => {
    out.push(
      `<rect x="${lx}" y="32" width="12" height="12" fill="${PALETTE[i % PALETTE.length]}"/>`,
      `<text x="${lx + 16}" y="42">${escapeXml(s.name)}</text>`,
    );
    lx += 16 + textWidth(s.name) + 20;
  });
  // Grid lines at each step of the axis, labelled below the plot.
  const bottom = TOP + chart.categories.length * groupHeight;
  for (let i = 0; i * axis.step <= max * (1 + 1e-9); i++) {
    const v = i * axis.step;
    out.push(
      `<line x1="${x(v)}" y1="${TOP - 4}" x2="${x(v)}" y2="${bottom}" stroke="#dddddd"/>`,
      `<text x="${x(v)}" y="${bottom + 14}" text-anchor="middle" fill="#555555">${formatValue(v, max)}</text>`,
    );
  }
  out.push(
    `<text x="${LABEL_WIDTH + PLOT_WIDTH / 2}" y="${bottom + 30}" text-anchor="middle" fill="#555555">${escapeXml(chart.unit)}</text>`,
  );
  chart.categories.forEach((category, c) => {
    const gy = TOP + c * groupHeight;
    out.push(
      `<text x="${LABEL_WIDTH - 8}" y="${gy + (chart.series.length * BAR) / 2 + 4}" text-anchor="end">${escapeXml(category)}</text>`,
    );
    chart.series.forEach((s, i) => {
      const v = s.values[c];
      if (v === undefined) return;
      const y = gy + i * BAR;
      out.push(
        `<rect class="bar" x="${LABEL_WIDTH}" y="${y}" width="${(x(v) - LABEL_WIDTH).toFixed(1)}" height="${BAR - 2}" fill="${PALETTE[i % PALETTE.length]}"><title>${escapeXml(`${s.name}, ${category}: ${v}`)}</title></rect>`,
        `<text x="${(x(v) + 4).toFixed(1)}" y="${y + BAR - 3}" font-size="10" fill="#333333">${formatValue(v, max)}</text>`,
      );
    });
  });
  out.push("</svg>");
  return `${out.join("\n")}\n`;
}

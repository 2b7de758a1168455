// The latency chart of bench:http (docs/benchmarks/http-latency.png): at the highest concurrency,
// per dialect and workload, each endpoint's p50, p99 and p99.9 as markers on one vertical line
// (milliseconds, linear), so a long tail shows as a long line.
import { Canvas, textWidth, type Rgba } from "../png.js";
import { ENDPOINT_FACTS, ENDPOINTS, type Endpoint } from "./requests.js";
import type { HttpReport } from "./run.js";

const INK: Rgba = [30, 30, 30, 255];
const GRID: Rgba = [225, 225, 225, 255];
const COLORS: Readonly<Record<Endpoint, Rgba>> = {
  hand: [31, 119, 180, 255], paginate: [127, 127, 127, 255], querylib: [44, 160, 44, 255], "querylib-audit": [214, 39, 40, 255], "querylib-audit-group": [148, 103, 189, 255],
  "querylib-nomask": [255, 127, 14, 255],
};

export function httpLatencyChart(report: HttpReport): Buffer {
  const top = Math.max(...report.cells.map((c) => c.concurrency));
  const dialects = [...new Set(report.cells.map((c) => c.dialect))];
  const workloads = [...new Set(report.cells.map((c) => c.workload))];
  const panelW = 420;
  const panelH = 360;
  const legendH = 70;
  const canvas = new Canvas(panelW * dialects.length, panelH + legendH);
  dialects.forEach((dialect, d) => {
    const cells = report.cells.filter((c) => c.dialect === dialect && c.concurrency === top);
    const ox = d * panelW;
    const left = ox + 60;
    const right = ox + panelW - 15;
    const upper = 40;
    const bottom = panelH - 45;
    const title = `${dialect.toUpperCase()} AT ${top} CONNECTIONS`;
    canvas.text(ox + (panelW - textWidth(title, 2)) / 2, 12, title, INK, 2);
    const yMaxRaw = Math.max(1, ...cells.map((c) => c.median.p999));
    const step = niceStep(yMaxRaw / 5);
    const yMax = Math.ceil(yMaxRaw / step) * step;
    const sy = (v: number) => bottom - (v / yMax) * (bottom - upper);
    for (let v = 0; v <= yMax + 1e-9; v += step) {
      canvas.line(left, sy(v), right, sy(v), GRID);
      const label = String(Number(v.toFixed(1)));
      canvas.text(left - 8 - textWidth(label), sy(v) - 3, label, INK);
    }
    canvas.line(left, bottom, right, bottom, INK);
    canvas.line(left, upper, left, bottom, INK);
    canvas.textVertical(ox + 12, (upper + bottom) / 2 + textWidth("MS") / 2, "MS", INK);
    const groupW = (right - left) / workloads.length;
    workloads.forEach((workload, w) => {
      const gx = left + w * groupW;
      canvas.text(gx + (groupW - textWidth(workload)) / 2, bottom + 10, workload, INK);
      ENDPOINTS.forEach((endpoint, e) => {
        const cell = cells.find((c) => c.workload === workload && c.endpoint === endpoint);
        if (!cell) return;
        const x = gx + ((e + 1) * groupW) / (ENDPOINTS.length + 1);
        const color = COLORS[endpoint];
        canvas.line(x, sy(cell.median.p50), x, sy(cell.median.p999), color, 2);
        canvas.marker(x, sy(cell.median.p50), 7, color);
        canvas.fillRect(x - 5, sy(cell.median.p99) - 1, 11, 3, color);
        canvas.fillRect(x - 3, sy(cell.median.p999) - 1, 7, 3, color);
      });
    });
  });
  let x = 20;
  const y = panelH + 10;
  canvas.text(20, y, "MARKER P50, WIDE BAR P99, SHORT BAR P99.9:", INK, 2);
  for (const endpoint of ENDPOINTS) {
    const label = ENDPOINT_FACTS[endpoint].chartLabel;
    const width = 38 + textWidth(label, 2) + 24;
    canvas.line(x, y + 37, x + 30, y + 37, COLORS[endpoint], 3);
    canvas.text(x + 38, y + 30, label, INK, 2);
    x += width;
  }
  return canvas.toPng();
}

function niceStep(raw: number): number {
  if (!(raw > 0)) return 1;
  const magnitude = 10 ** Math.floor(Math.log10(raw));
  const residual = raw / magnitude;
  return (residual <= 1 ? 1 : residual <= 2 ? 2 : residual <= 2.5 ? 2.5 : residual <= 5 ? 5 : 10) * magnitude;
}

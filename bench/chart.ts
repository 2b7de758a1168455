// The growth chart (bench/out/growth.png): cost against condition count and page size, build
// and execution side by side, one line per dialect × variant.
import { Canvas, textWidth, type Rgba } from "./png.js";
import type { GrowthSeries } from "./report.js";

const COLORS: Record<string, Rgba> = {
  "sqlite typeorm": [31, 119, 180, 255],
  "postgres typeorm": [214, 39, 40, 255],
  "sqlite querylib": [44, 160, 44, 255],
  "postgres querylib": [255, 127, 14, 255],
  "sqlite querylib-guarded": [148, 103, 189, 255],
  "postgres querylib-guarded": [140, 86, 75, 255],
};
const FALLBACK: Rgba[] = [
  [23, 190, 207, 255],
  [188, 189, 34, 255],
  [127, 127, 127, 255],
];

const INK: Rgba = [30, 30, 30, 255];
const GRID: Rgba = [225, 225, 225, 255];

interface Panel {
  title: string;
  xLabel: string;
  yLabel: string;
  series: GrowthSeries[];
  /** Convert µs to the panel's unit. */
  scale: number;
}

export function growthChart(series: GrowthSeries[]): Buffer {
  const panels: Panel[] = [
    { title: "BUILD VS CONDITIONS", xLabel: "CONDITIONS", yLabel: "MEDIAN US", scale: 1, series: pick(series, "conditions", "build") },
    { title: "END TO END VS CONDITIONS", xLabel: "CONDITIONS", yLabel: "MEDIAN MS", scale: 1 / 1000, series: pick(series, "conditions", "exec") },
    { title: "BUILD VS PAGE SIZE", xLabel: "PAGE SIZE", yLabel: "MEDIAN US", scale: 1, series: pick(series, "pageSize", "build") },
    { title: "END TO END VS PAGE SIZE", xLabel: "PAGE SIZE", yLabel: "MEDIAN MS", scale: 1 / 1000, series: pick(series, "pageSize", "exec") },
    { title: "BUILD VS PATH DEPTH", xLabel: "PATH DEPTH (SEGMENTS)", yLabel: "MEDIAN US", scale: 1, series: pick(series, "depth", "build") },
    { title: "END TO END VS PATH DEPTH", xLabel: "PATH DEPTH (SEGMENTS)", yLabel: "MEDIAN MS", scale: 1 / 1000, series: pick(series, "depth", "exec") },
  ];
  const panelW = 560;
  const panelH = 360;
  const legendH = 100;
  const rows = Math.ceil(panels.length / 2);
  const canvas = new Canvas(panelW * 2, panelH * rows + legendH);
  panels.forEach((panel, i) => drawPanel(canvas, panel, (i % 2) * panelW, Math.floor(i / 2) * panelH, panelW, panelH));
  // Legend
  const labels = [...new Set(series.map((s) => `${s.dialect} ${s.variant}`))];
  let x = 20;
  let y = panelH * rows + 15;
  canvas.text(20, y, "GROWTH OF MEDIAN COST (LINEAR AXES). LINES:", INK, 2);
  y += 25;
  labels.forEach((label, i) => {
    const color = colorOf(label, i);
    const width = 38 + textWidth(label, 2) + 30;
    if (x + width > canvas.width - 10) {
      x = 20;
      y += 24;
    }
    canvas.line(x, y + 7, x + 30, y + 7, color, 3);
    canvas.text(x + 38, y, label.toUpperCase(), INK, 2);
    x += width;
  });
  return canvas.toPng();
}

function pick(series: GrowthSeries[], axis: GrowthSeries["axis"], metric: GrowthSeries["metric"]) {
  return series.filter((s) => s.axis === axis && s.metric === metric && s.points.length > 0);
}

function colorOf(label: string, index: number): Rgba {
  return COLORS[label] ?? FALLBACK[index % FALLBACK.length];
}

function drawPanel(canvas: Canvas, panel: Panel, ox: number, oy: number, w: number, h: number): void {
  const left = ox + 80;
  const right = ox + w - 20;
  const top = oy + 40;
  const bottom = oy + h - 55;
  canvas.text(ox + (w - textWidth(panel.title, 2)) / 2, oy + 12, panel.title, INK, 2);
  const points = panel.series.flatMap((s) => s.points);
  if (points.length === 0) {
    canvas.text(left + 20, (top + bottom) / 2, "NO DATA", INK, 2);
    return;
  }
  const xMax = Math.max(...points.map((p) => p.x));
  const xMin = 0;
  const yMaxRaw = Math.max(...points.map((p) => p.p50 * panel.scale));
  const yStep = niceStep(yMaxRaw / 5);
  const yMax = Math.max(yStep, Math.ceil(yMaxRaw / yStep) * yStep);
  const xStep = niceStep(xMax / 5);
  const sx = (v: number) => left + ((v - xMin) / (xMax - xMin || 1)) * (right - left);
  const sy = (v: number) => bottom - (v / yMax) * (bottom - top);
  // Grid and ticks
  for (let v = 0; v <= yMax + 1e-9; v += yStep) {
    const y = sy(v);
    canvas.line(left, y, right, y, GRID);
    const label = formatTick(v);
    canvas.text(left - 8 - textWidth(label), y - 3, label, INK);
  }
  for (let v = 0; v <= xMax + 1e-9; v += xStep) {
    const x = sx(v);
    canvas.line(x, top, x, bottom, GRID);
    const label = formatTick(v);
    canvas.text(x - textWidth(label) / 2, bottom + 8, label, INK);
  }
  canvas.line(left, bottom, right, bottom, INK);
  canvas.line(left, top, left, bottom, INK);
  canvas.text((left + right) / 2 - textWidth(panel.xLabel) / 2, bottom + 24, panel.xLabel, INK);
  canvas.textVertical(ox + 12, (top + bottom) / 2 + textWidth(panel.yLabel) / 2, panel.yLabel, INK);
  // Lines
  const labels = [...new Set(panel.series.map((s) => `${s.dialect} ${s.variant}`))];
  for (const s of panel.series) {
    const label = `${s.dialect} ${s.variant}`;
    const color = colorOf(label, labels.indexOf(label));
    const sorted = [...s.points].sort((a, b) => a.x - b.x);
    for (let i = 1; i < sorted.length; i++) {
      canvas.line(sx(sorted[i - 1].x), sy(sorted[i - 1].p50 * panel.scale), sx(sorted[i].x), sy(sorted[i].p50 * panel.scale), color, 2);
    }
    for (const p of sorted) canvas.marker(sx(p.x), sy(p.p50 * panel.scale), 6, color);
  }
}

function niceStep(raw: number): number {
  if (!(raw > 0)) return 1;
  const magnitude = 10 ** Math.floor(Math.log10(raw));
  const residual = raw / magnitude;
  const nice = residual <= 1 ? 1 : residual <= 2 ? 2 : residual <= 2.5 ? 2.5 : residual <= 5 ? 5 : 10;
  return nice * magnitude;
}

function formatTick(v: number): string {
  if (v === 0) return "0";
  if (Math.abs(v) >= 100) return String(Math.round(v));
  if (Math.abs(v) >= 1) return String(Number(v.toFixed(1)));
  return String(Number(v.toFixed(3)));
}

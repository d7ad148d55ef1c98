/**
 * The console's two static files, its stylesheet and its script, read once when the API starts
 * and served from memory under a name carrying their digest, so a browser may keep them for good
 * and a new version is a new name. Nothing else is served from disk.
 */
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import path from "node:path";
import type { RequestHandler } from "express";

interface Asset {
  body: Buffer;
  type: string;
}

function load(file: string, type: string): { path: string; asset: Asset } {
  const body = readFileSync(path.join(import.meta.dirname, "assets", file));
  const digest = createHash("sha256").update(body).digest("hex").slice(0, 12);
  const [name, extension] = file.split(".");
  return { path: `/ui/assets/${name ?? file}.${digest}.${extension ?? ""}`, asset: { body, type } };
}

const css = load("console.css", "text/css; charset=utf-8");
const js = load("console.js", "text/javascript; charset=utf-8");

/** Where the pages link the stylesheet and the script. */
export const ASSET_PATHS = { css: css.path, js: js.path } as const;

const BY_PATH = new Map<string, Asset>([
  [css.path, css.asset],
  [js.path, js.asset],
]);

/** Serves an asset under its digest name (mounted at /ui: `req.path` is below it). */
export const serveAsset: RequestHandler = function serveAsset(req, res, next) {
  const asset = BY_PATH.get(`/ui${req.path}`);
  if (!asset) return next();
  res.setHeader("content-type", asset.type);
  res.setHeader("cache-control", "public, max-age=31536000, immutable");
  res.end(asset.body);
};

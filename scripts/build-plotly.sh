#!/usr/bin/env bash
# Builds src/ptsbench/data/plotly-ptsbench.min.js.gz, the plotly.js every HTML report carries (gzip-compressed,
# unpacked by the page itself): plotly.js's core (scatter) with the only other trace types ptsbench draws (bar,
# heatmap, mesh3d for 3D bars, surface), about 1.8 MB of JavaScript instead of plotly's full 4.8 MB bundle, 0.6 MB
# compressed. Needs node and npm (the report does not: the built file is in the repository). Run it after changing
# BUNDLED_TRACES in src/ptsbench/report/core/html.py or the plotly.js version below; the versions are pinned so the
# same file comes out again.
set -euo pipefail
cd "$(dirname "$0")/.."
out="$PWD/src/ptsbench/data/plotly-ptsbench.min.js.gz"
# a fixed folder: plotly's CSS gets an element id hashed from its file's path, so the same path gives the same file
work="${TMPDIR:-/tmp}/ptsbench-build-plotly"
rm -rf "$work"
mkdir -p "$work"
trap 'rm -rf "$work"' EXIT
cd "$work"
npm init -y >/dev/null
npm install --no-audit --no-fund --silent plotly.js@4.1.1 esbuild@0.28.2 esbuild-plugin-glsl@1.4.2 \
    esbuild-plugin-inline-css@0.0.1 esbuild-plugin-environment@0.5.0
cat > entry.js <<'JS'
'use strict';
var Plotly = require('plotly.js/lib/core');
Plotly.register([
    require('plotly.js/lib/bar'),
    require('plotly.js/lib/heatmap'),
    require('plotly.js/lib/mesh3d'),
    require('plotly.js/lib/surface'),
]);
module.exports = Plotly;
JS
cat > build.js <<'JS'
// plotly.js's own build options (its esbuild-config.js), minified
const { environmentPlugin } = require('esbuild-plugin-environment');
const { glsl } = require('esbuild-plugin-glsl');
const InlineCSSPlugin = require('esbuild-plugin-inline-css');
require('esbuild').build({
    entryPoints: ['entry.js'], outfile: 'plotly.min.js', format: 'iife', globalName: 'Plotly', bundle: true,
    minify: true, sourcemap: false, legalComments: 'none', target: 'es2016', logLevel: 'warning',
    plugins: [InlineCSSPlugin(), glsl({ minify: true }), environmentPlugin({ NODE_DEBUG: false })],
    alias: { regl: '@plotly/regl', stream: 'stream-browserify' },
    define: { global: 'window', 'define.amd': 'false' },
    banner: { js: '/* plotly.js v4.1.1 (MIT license, Copyright 2012-2026 Plotly, Inc.): core, bar, heatmap, mesh3d, surface */' },
}).catch(() => process.exit(1));
JS
node build.js
gzip -9 -n -c plotly.min.js > "$out"
echo "wrote $out ($(stat -c %s "$out") bytes; $(stat -c %s plotly.min.js) bytes unpacked)"

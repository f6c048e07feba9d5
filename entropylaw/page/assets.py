"""The report page's style sheet and its two small scripts (inline: the page fetches nothing).

- The style puts the first table and the ceiling figure side by side where both fit (the
  figure moves under the table where they do not; a figure shrinks to its room, never stretches
  past its pixels, which blurred it and set its type half as large again as the table's), keeps
  every row of the first table on one line from 1100 px of width but for its reason, shown whole
  and wrapped in small type
  (every reason in its tooltip); run labels are whole (cut in the middle where long, by the
  results), never cut at their end; cells wrap below that so that the table reflows instead of
  scrolling, and never lets an element grow wider than the window. Long names (run ids,
  score keys) break at their separators (``<wbr>``), never inside a word.
- ``CHECK_SCRIPT`` records, once the page has loaded, that every image decoded and that
  no script error happened, on ``<body>`` as ``data-images-loaded``,
  ``data-images-failed`` and ``data-js-errors`` (a headless browser test reads them).
- ``ZOOM_SCRIPT``: a click on a figure opens it at full size over the page (scrollable;
  a click or Escape closes it).
"""

CSS = """
*{box-sizing:border-box}
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:0 auto;max-width:1280px;
     color:#1f2328;line-height:1.4;padding:.8rem 1rem 2rem}
h1{font-size:1.35rem;margin:.2rem 0} h2{font-size:1.08rem;margin:1.6rem 0 .5rem;padding-bottom:.2rem;
     border-bottom:1px solid #d0d7de} h3{font-size:.95rem;margin:1rem 0 .3rem}
p{margin:.35rem 0} .sub,.muted{color:#57606a;font-size:.82rem}
nav{font-size:.82rem;margin:.3rem 0 .2rem} nav a{margin-right:.9rem;color:#0969da;text-decoration:none}
.first{display:flex;flex-wrap:wrap;gap:1rem;align-items:flex-start}
.first>.tablebox{flex:0 1 auto;min-width:0} .first>figure.side{flex:1 1 240px;max-width:45rem;
     min-width:min(100%,26rem)}
.tablebox{overflow-x:auto;max-width:100%}
table{border-collapse:collapse;font-size:.8rem;font-variant-numeric:tabular-nums}
th,td{padding:.1rem .4rem;border-bottom:1px solid #eaeef2;text-align:right;white-space:nowrap;vertical-align:middle}
th{background:#f6f8fa;font-weight:600;font-size:.76rem} th.l,td.l{text-align:left}
th.num,td.num{color:#6e7781;padding-right:.15rem}
td.why{white-space:normal;min-width:15rem;max-width:24rem;color:#57606a;text-align:left;font-size:.72rem;
     line-height:1.05}
tr.family td{background:#fbfbfc;font-weight:600;text-align:left;color:#24292f;font-size:.76rem;padding-top:.35rem}
.flag{display:inline-block;padding:0 .35rem;border-radius:.6rem;font-size:.72rem;font-weight:600;color:#fff}
.flag.good{background:#1a7f37} .flag.weak{background:#b35c00} .flag.na{background:#b3261e}
.flag.none{background:#6e7781}
.void{color:#8c959f} table.runs td .tag{display:block;font-size:.68rem;line-height:1} .tag .regime{color:#b35c00;font-weight:600} .dagger{color:#b35c00;font-weight:700}
sup{font-size:.62rem;color:#6e7781;margin-left:.1rem}
svg.swatch{vertical-align:middle}
figure{margin:.6rem 0 1.2rem} figure img{max-width:100%;height:auto;border:1px solid #eaeef2;cursor:zoom-in}
figure.side{margin:0}
figcaption{font-size:.8rem;color:#424a53;max-width:62rem}
ol.ids{columns:2;column-gap:2rem;font-size:.72rem;color:#57606a;margin:.4rem 0 0;padding-left:1.6rem}
ol.ids li{break-inside:avoid;overflow-wrap:anywhere}
.key{font-size:.74rem;color:#57606a;margin:.3rem 0;width:0;min-width:100%}
p.live{color:#7d4e00;font-size:.9rem;overflow-wrap:anywhere}
ul.warn{padding-left:1.2rem;font-size:.82rem} ul.warn li{color:#7d4e00;margin:.15rem 0;overflow-wrap:anywhere}
details summary{cursor:pointer} .scroll{overflow-x:auto;max-width:100%}
table.details{width:100%} table.details td{white-space:normal} table.details td.id{overflow-wrap:break-word;
     max-width:13rem} table.details td.nums{white-space:nowrap}
@media (max-width:1100px){table.runs th,table.runs td{white-space:normal} table.runs td.why{
     min-width:0;max-width:none} table.details th,table.details td.nums{white-space:normal}}
#zoom{display:none;position:fixed;inset:0;background:rgba(20,20,20,.86);overflow:auto;z-index:10;cursor:zoom-out}
#zoom.open{display:block} #zoom img{display:block;margin:1rem auto;background:#fff;max-width:none}
"""

CHECK_SCRIPT = """
(function(){
  var errors = 0;
  window.addEventListener('error', function(){ errors += 1; if (document.body) document.body.dataset.jsErrors = errors; });
  window.addEventListener('load', function(){
    var imgs = document.images, ok = 0;
    for (var i = 0; i < imgs.length; i++) { if (imgs[i].complete && imgs[i].naturalWidth > 0) ok += 1; }
    document.body.dataset.imagesLoaded = ok;
    document.body.dataset.imagesFailed = imgs.length - ok;
    document.body.dataset.jsErrors = errors;
  });
})();
"""

ZOOM_SCRIPT = """
(function(){
  var box = document.getElementById('zoom');
  function close(){ box.className = ''; box.innerHTML = ''; }
  document.addEventListener('click', function(e){
    var t = e.target;
    if (t.tagName === 'IMG' && t.dataset.zoom !== undefined) {
      var big = document.createElement('img'); big.src = t.src; big.alt = t.alt; big.id = 'zoom-img';
      box.innerHTML = ''; box.appendChild(big); box.className = 'open';
    } else if (box.className === 'open') { close(); }
  });
  document.addEventListener('keydown', function(e){ if (e.key === 'Escape') close(); });
})();
"""

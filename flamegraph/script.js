// The flame graph's interaction: details on hover, zoom on click, search.
(function () {
	"use strict";
	var svg = document.getElementById("flamegraph");
	var width = parseFloat(svg.getAttribute("data-width"));
	var padX = parseFloat(svg.getAttribute("data-pad"));
	var charWidth = parseFloat(svg.getAttribute("data-char"));
	var details = document.getElementById("details");
	var matched = document.getElementById("matched");
	var reset = document.getElementById("reset");
	var search = document.getElementById("search");
	var frames = Array.prototype.slice.call(svg.querySelectorAll("g.frame"));

	frames.forEach(function (g) {
		g.x = parseFloat(g.getAttribute("data-x"));
		g.w = parseFloat(g.getAttribute("data-w"));
		g.d = parseInt(g.getAttribute("data-d"), 10);
		g.name = g.getAttribute("data-name");
		g.rect = g.querySelector("rect");
		g.label = g.querySelector("text");
		g.fill = g.rect.getAttribute("fill");
		g.addEventListener("mouseover", function () {
			details.textContent = g.querySelector("title").textContent;
		});
		g.addEventListener("mouseout", function () { details.textContent = " "; });
		g.addEventListener("click", function () { zoom(g); });
	});

	// place draws g at x, w pixels wide, its name cut to what fits.
	function place(g, x, w) {
		g.rect.setAttribute("x", padX + x);
		g.rect.setAttribute("width", w);
		g.label.setAttribute("x", padX + x + 3);
		var fit = Math.floor((w - 6) / charWidth);
		var text = "";
		if (g.name.length <= fit) {
			text = g.name;
		} else if (fit >= 3) {
			text = g.name.slice(0, fit - 2) + "..";
		}
		g.label.textContent = text;
	}

	// zoom widens z to the full width with what is above it; the frames
	// below it stay, full width and dimmed; the others hide.
	function zoom(z) {
		if (z.d === 0) {
			unzoom();
			return;
		}
		var eps = 1e-6;
		frames.forEach(function (g) {
			var above = g.d >= z.d && g.x >= z.x - eps && g.x + g.w <= z.x + z.w + eps;
			var below = g.d < z.d && g.x <= z.x + eps && g.x + g.w >= z.x + z.w - eps;
			g.style.display = above || below ? "" : "none";
			g.classList.toggle("parent", below);
			if (above) {
				place(g, (g.x - z.x) * width / z.w, g.w * width / z.w);
			} else if (below) {
				place(g, 0, width);
			}
		});
		reset.classList.remove("hidden");
	}

	function unzoom() {
		frames.forEach(function (g) {
			g.style.display = "";
			g.classList.remove("parent");
			place(g, g.x, g.w);
		});
		reset.classList.add("hidden");
	}
	reset.addEventListener("click", unzoom);

	// The search colors the frames whose names match and adds up their
	// share; a match inside another is counted once, in the outer one.
	search.addEventListener("input", function () {
		var re = null;
		try {
			re = search.value ? new RegExp(search.value) : null;
		} catch (e) {
			re = null;
		}
		var hits = frames.filter(function (g) {
			var hit = re !== null && re.test(g.name);
			g.rect.setAttribute("fill", hit ? "rgb(230,0,230)" : g.fill);
			return hit;
		});
		hits.sort(function (a, b) { return a.x - b.x || a.d - b.d; });
		var covered = 0, end = -1;
		hits.forEach(function (g) {
			if (g.x >= end - 1e-6) {
				covered += g.w;
				end = g.x + g.w;
			}
		});
		matched.textContent = re ? "Matched: " + (covered / width * 100).toFixed(1) + "%" : " ";
	});
})();

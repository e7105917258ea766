// Hovering a net in the legend (or a region) highlights all regions of that net.
(function () {
  "use strict";
  function highlight(net, on) {
    document.querySelectorAll('.region').forEach(function (g) {
      g.classList.toggle('dim', on && g.getAttribute('data-net') !== net);
      g.classList.toggle('hot', on && g.getAttribute('data-net') === net);
    });
  }
  document.querySelectorAll('[data-net]').forEach(function (el) {
    el.addEventListener('mouseenter', function () { highlight(el.getAttribute('data-net'), true); });
    el.addEventListener('mouseleave', function () { highlight('', false); });
  });
})();

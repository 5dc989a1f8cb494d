// Lo-Bug memory dashboard: small progressive enhancements. Every page works without them.
"use strict";

// Ask before a form that erases something is sent (forms marked data-confirm).
document.addEventListener("submit", (event) => {
  const form = event.target;
  const question = form.getAttribute("data-confirm");
  if (question && !window.confirm(question)) {
    event.preventDefault();
  }
});

// Conversations: mark the rows between the chosen "from" and "to" messages.
function markSpan(table) {
  const rows = Array.from(table.querySelectorAll("tbody tr"));
  const index = (name) => rows.findIndex((row) => {
    const radio = row.querySelector(`input[name="${name}"]`);
    return radio !== null && radio.checked;
  });
  const start = index("since");
  const end = index("until");
  rows.forEach((row, i) => {
    row.classList.toggle("selected", start >= 0 && end >= 0 && i >= Math.min(start, end) && i <= Math.max(start, end));
  });
}

document.querySelectorAll("table[data-span]").forEach((table) => {
  table.addEventListener("change", () => markSpan(table));
  markSpan(table);
});

// Draws every <pre class="mermaid"> with the local copy of Mermaid (never a CDN).
window.addEventListener("DOMContentLoaded", () => {
  const dark = document.body.dataset.theme === "dark" ||
    (document.body.dataset.theme !== "light" &&
     window.matchMedia("(prefers-color-scheme: dark)").matches);
  mermaid.initialize({ startOnLoad: false, theme: dark ? "dark" : "default",
                       securityLevel: "strict" });
  mermaid.run({ querySelector: "pre.mermaid" });
});

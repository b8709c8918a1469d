// The menu of one message (Edit, Delete, Details): one popup for the whole page, opened under the button that asks
// for it and placed by script (CSSOM, which the Content-Security-Policy allows). Arrow keys move, Escape or a click
// elsewhere closes it and gives the focus back to that button.
export function createMenu(element) {
  let anchor = null;

  function close() {
    if (!anchor) {
      return;
    }
    element.hidden = true;
    element.replaceChildren();
    anchor.setAttribute('aria-expanded', 'false');
    const was = anchor;
    anchor = null;
    if (element.contains(document.activeElement) || document.activeElement === document.body) {
      was.focus();
    }
  }

  /** Opens the menu of `button` with items [{label, action}]. */
  function open(button, items) {
    const again = anchor === button;
    close();
    if (again) {
      return; // a second click on the same button closes it
    }
    anchor = button;
    button.setAttribute('aria-expanded', 'true');
    element.replaceChildren(...items.map(({ label, action }) => {
      const item = document.createElement('button');
      item.type = 'button';
      item.setAttribute('role', 'menuitem');
      item.textContent = label;
      item.addEventListener('click', () => {
        close();
        action();
      });
      return item;
    }));
    element.hidden = false;
    const at = button.getBoundingClientRect();
    const { offsetWidth: width, offsetHeight: height } = element;
    const below = at.bottom + 4 + height <= window.innerHeight;
    element.style.top = `${below ? at.bottom + 4 : Math.max(4, at.top - 4 - height)}px`;
    element.style.left = `${Math.max(4, Math.min(at.right - width, window.innerWidth - width - 4))}px`;
    element.querySelector('button').focus();
  }

  element.addEventListener('keydown', (event) => {
    const items = [...element.querySelectorAll('button')];
    const at = items.indexOf(document.activeElement);
    if (event.key === 'Escape') {
      event.preventDefault();
      close();
    } else if (event.key === 'ArrowDown' || event.key === 'ArrowUp') {
      event.preventDefault();
      items[(at + (event.key === 'ArrowDown' ? 1 : items.length - 1)) % items.length].focus();
    } else if (event.key === 'Tab') {
      close();
    }
  });
  document.addEventListener('pointerdown', (event) => {
    if (anchor && !element.contains(event.target) && !anchor.contains(event.target)) {
      close();
    }
  });
  // not on scroll: a tick that changes or a message that arrives may scroll the chat while the menu is open
  window.addEventListener('resize', close);

  return { open, close };
}

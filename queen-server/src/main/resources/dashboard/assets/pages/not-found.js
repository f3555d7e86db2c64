// Any address the dashboard does not know.

import { h, link, pageHeader } from '../dom.js';

export default function notFoundPage() {
  const el = h('section', { 'data-page': 'not-found', class: 'page' },
    pageHeader('Page not found'),
    h('p', null, 'This address does not name a dashboard page. ', link('#/overview', 'Go to the overview'), '.'));
  return { title: 'Not found', el, refresh: async () => {} };
}

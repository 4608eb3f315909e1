/* Swagger UI on this service's own description; no validator badge (it would call an outside service). */
(function () {
  'use strict';
  window.ui = window.SwaggerUIBundle({
    url: '/openapi.json',
    dom_id: '#swagger-ui',
    deepLinking: true,
    presets: [window.SwaggerUIBundle.presets.apis],
    layout: 'BaseLayout',
    validatorUrl: null,
    defaultModelsExpandDepth: 0,
    docExpansion: 'list',
    tryItOutEnabled: false,
  });
})();

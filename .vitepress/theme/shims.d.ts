// Lets `tsc --noEmit` type-check the theme's TypeScript that imports single-file components.
declare module "*.vue" {
  import type { DefineComponent } from "vue";

  const component: DefineComponent;
  export default component;
}

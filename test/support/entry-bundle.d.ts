/** Types of entry-bundle.js (plain JavaScript, so the action project's global setup can load it). */
export declare const ROOT: string;
export declare const BUILD: string;
export declare const HELPER: string;
export declare function bundleName(entry: string): string;
export declare function bundleEntryInto(folder: string, entry: string): Promise<string>;

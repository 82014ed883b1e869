/** The two databases the store runs on (its own file: the migrations need it and db.ts needs the migrations). */
export type Dialect = 'sqlite' | 'postgres';

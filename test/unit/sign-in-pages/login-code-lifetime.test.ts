import { loginCodeLifetime } from '../../../core/sign-in/login-code-lifetime.js';

describe('loginCodeLifetime', () => {
  test('says whole minutes in the language, with its plural', () => {
    expect(loginCodeLifetime('en', 300)).toBe('5 minutes');
    expect(loginCodeLifetime('en', 60)).toBe('1 minute');
    expect(loginCodeLifetime('fr', 600)).toBe('10 minutes');
    expect(loginCodeLifetime('fr', 60)).toBe('1 minute');
    expect(loginCodeLifetime('de', 600)).toBe('10 Minuten');
    expect(loginCodeLifetime('de', 60)).toBe('1 Minute');
    expect(loginCodeLifetime('es', 600)).toBe('10 minutos');
    expect(loginCodeLifetime('es', 60)).toBe('1 minuto');
    expect(loginCodeLifetime('pt', 600)).toBe('10 minutos');
    expect(loginCodeLifetime('pt', 60)).toBe('1 minuto');
  });

  test('rounds down, so it never promises more than the code lives', () => {
    expect(loginCodeLifetime('en', 119)).toBe('1 minute');
    expect(loginCodeLifetime('en', 3600)).toBe('60 minutes');
  });
});

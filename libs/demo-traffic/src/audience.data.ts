import { Weighted } from './random';

export interface Place {
  readonly country: string;
  readonly region: string;
  readonly metro: string;
  readonly zips: readonly string[];
}

/** A plausible audience for English-language newsletters; metros are market-area codes. */
export const PLACES = new Weighted<Place>([
  [{ country: 'US', region: 'NY', metro: '501', zips: ['10001', '10011', '10128', '11201'] }, 18],
  [{ country: 'US', region: 'CA', metro: '803', zips: ['90001', '90210', '91101'] }, 14],
  [{ country: 'US', region: 'CA', metro: '807', zips: ['94103', '94110', '94301'] }, 8],
  [{ country: 'US', region: 'IL', metro: '602', zips: ['60601', '60614'] }, 8],
  [{ country: 'US', region: 'TX', metro: '623', zips: ['75201', '75204'] }, 7],
  [{ country: 'US', region: 'FL', metro: '528', zips: ['33101', '33139'] }, 6],
  [{ country: 'CA', region: 'ON', metro: '', zips: ['M5V', 'M4C'] }, 7],
  [{ country: 'GB', region: 'ENG', metro: '', zips: ['SW1A', 'EC1A', 'M1'] }, 9],
  [{ country: 'DE', region: 'BE', metro: '', zips: ['10115', '10243'] }, 5],
  [{ country: 'FR', region: 'IDF', metro: '', zips: ['75001', '75011'] }, 4],
  [{ country: 'AU', region: 'NSW', metro: '', zips: ['2000', '2010'] }, 4],
]);

export interface Device {
  readonly type: string;
  readonly maker: string;
  readonly model: string;
  readonly os: string;
  readonly browsers: readonly string[];
}

export const DEVICES = new Weighted<Device>([
  [
    { type: 'Phone', maker: 'Apple', model: 'iPhone 15', os: 'iOS', browsers: ['Apple Mail', 'Gmail App'] },
    24,
  ],
  [
    {
      type: 'Phone',
      maker: 'Samsung',
      model: 'Galaxy S24',
      os: 'Android',
      browsers: ['Gmail App', 'Samsung Email'],
    },
    12,
  ],
  [{ type: 'Phone', maker: 'Google', model: 'Pixel 8', os: 'Android', browsers: ['Gmail App'] }, 4],
  [{ type: 'Tablet', maker: 'Apple', model: 'iPad Air', os: 'iPadOS', browsers: ['Apple Mail'] }, 7],
  [
    { type: 'PC', maker: 'Apple', model: 'Mac', os: 'macOS', browsers: ['Apple Mail', 'Chrome', 'Safari'] },
    12,
  ],
  [
    {
      type: 'PC',
      maker: 'Dell',
      model: 'Windows PC',
      os: 'Windows',
      browsers: ['Outlook', 'Chrome', 'Edge'],
    },
    20,
  ],
  [{ type: 'WebmailProxy', maker: 'Google', model: 'Gmail Image Proxy', os: '', browsers: ['Gmail'] }, 16],
  [{ type: 'WebmailProxy', maker: 'Yahoo', model: 'Yahoo Image Proxy', os: '', browsers: ['Yahoo Mail'] }, 3],
  [{ type: 'MediaCenter', maker: 'Roku', model: 'Roku Ultra', os: 'Roku OS', browsers: ['Roku'] }, 2],
]);

export const AGES = new Weighted<string>([
  ['18-20', 3],
  ['21-24', 7],
  ['25-34', 20],
  ['35-44', 22],
  ['45-54', 20],
  ['55-64', 16],
  ['65+', 12],
]);

export const GENDERS = new Weighted<string>([
  ['female', 52],
  ['male', 48],
]);

export const EMAIL_DOMAINS = new Weighted<string>([
  ['gmail.com', 45],
  ['yahoo.com', 14],
  ['outlook.com', 12],
  ['icloud.com', 10],
  ['aol.com', 6],
  ['comcast.net', 5],
  ['protonmail.com', 2],
]);

export const SEGMENTS = new Weighted<readonly [string, string]>([
  [['', ''], 50],
  [['interest', 'sports'], 10],
  [['interest', 'finance'], 10],
  [['interest', 'travel'], 8],
  [['tier', 'premium'], 12],
  [['tier', 'free'], 10],
]);

/** Share of email opens in each UTC hour: a morning peak and a smaller evening one. */
export const HOURS = new Weighted<number>(
  [1, 1, 1, 1, 1, 2, 4, 7, 9, 9, 8, 7, 7, 6, 6, 6, 6, 6, 7, 7, 6, 4, 3, 2].map(
    (w, hour) => [hour, w] as const,
  ),
);
